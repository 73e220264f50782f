import { randomBytes, timingSafeEqual } from 'node:crypto';
import { NotFoundError, ValidationFailedError } from '../../kernel/errors.js';
import { hashKey } from './api-key.resolver.js';
import type { OAuthClientRepository } from './oauth-client.repository.js';
import { registrationProblems } from './oauth-client.rules.js';
import type { OAuthClientInputBody, OAuthClientView } from './oauth-client.schema.js';

export interface CreatedOAuthClient extends OAuthClientView {
  /** Confidential clients only; the only time it is visible. */
  clientSecret: string | null;
}

export interface RegisteredClient extends OAuthClientView {
  confidential: boolean;
  /** The account that registered it; client-credentials tokens act as it. */
  createdBy: number | null;
}

/** OAuth clients, registered by staff (the route needs `admin`; the operator CLI too). */
export class OAuthClientService {
  constructor(private readonly clients: OAuthClientRepository) {}

  /** `ownerAccountId`: who registers it; client-credentials tokens act as that account. */
  async register(input: OAuthClientInputBody, ownerAccountId: number | null): Promise<CreatedOAuthClient> {
    const registration = { type: input.type, redirectUris: input.redirectUris ?? [], grants: input.grants, scopes: input.scopes };
    const problems = registrationProblems(registration);
    if (problems.length > 0) throw new ValidationFailedError(`The client is invalid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}.`, problems);
    // 128-bit id, 256-bit secret: random, so a fast hash (SHA-256) is enough to store the secret.
    const clientSecret = input.type === 'confidential' ? `cs_${randomBytes(32).toString('base64url')}` : null;
    const client = await this.clients.insert({
      ...registration,
      clientId: `cl_${randomBytes(16).toString('base64url')}`,
      secretHash: clientSecret === null ? null : hashKey(clientSecret),
      name: input.name.trim(),
      createdBy: ownerAccountId,
    });
    return { ...client, clientSecret };
  }

  /** A registered client by its client_id, with its owner (who acts for client credentials). */
  async find(clientId: string): Promise<RegisteredClient | undefined> {
    const client = await this.clients.findForAuthentication(clientId);
    if (!client) return undefined;
    const { secretHash, ...view } = client;
    return { ...view, confidential: secretHash !== null };
  }

  /**
   * The client, if `secret` authenticates it: a confidential client needs its secret, a public
   * client has none and must send none. Compared as SHA-256 digests, in constant time.
   */
  async authenticate(clientId: string, secret: string | undefined): Promise<RegisteredClient | undefined> {
    const client = await this.clients.findForAuthentication(clientId);
    if (!client) return undefined;
    const { secretHash, ...view } = client;
    if (secretHash === null) return secret ? undefined : { ...view, confidential: false };
    if (!secret || !timingSafeEqual(Buffer.from(hashKey(secret), 'hex'), Buffer.from(secretHash, 'hex'))) return undefined;
    return { ...view, confidential: true };
  }

  /** The public client_id of a client by its row id (what grants store); undefined once it is deleted. */
  clientIdOf(id: number): Promise<string | undefined> {
    return this.clients.clientIdOf(id);
  }

  list(): Promise<OAuthClientView[]> {
    return this.clients.list();
  }

  async delete(id: number): Promise<void> {
    if (!(await this.clients.delete(id))) throw new NotFoundError(`OAuth client ${id} not found.`);
  }
}
