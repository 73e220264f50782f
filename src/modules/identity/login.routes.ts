import type { BruteForceGuard } from '../../kernel/brute-force.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import type { LoginService } from './login.service.js';

const LoginRequest = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 64, examples: ['admin'] }),
    password: Type.String({ minLength: 1, maxLength: 256, format: 'password', examples: ['correct horse battery staple'] }),
  },
  { additionalProperties: false },
);

const LoginResponse = Type.Object({
  token: Type.String({ description: 'A JWT to send as `Authorization: Bearer <token>`.' }),
  expiresAt: Type.String({ format: 'date-time' }),
});

export const loginRoutes: FastifyPluginAsyncTypebox<{ logins: LoginService; bruteForce: BruteForceGuard }> = async (app, { logins, bruteForce }) => {
  app.post('/customer/login', {
    config: { auth: 'public' },
    schema: {
      tags: ['customer'],
      operationId: 'loginCustomer',
      summary: 'Log in: a login token (JWT) for the account',
      description: 'A wrong username and a wrong password get the same 401, in the same time. The token works wherever `bearer_auth` or `oauth` is listed, with the scopes of the account\'s role, until it expires or GET /customer/logout revokes it.',
      body: LoginRequest,
      response: { 200: LoginResponse, ...errorResponses(400, 401, 415, 422, 429) },
    },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const attempt = await bruteForce('login', request.ip, request.body.username);
    const token = await logins.login(request.body.username, request.body.password);
    await attempt.succeeded();
    return token;
  });

  app.get('/customer/logout', {
    config: { auth: { schemes: ['bearer_auth'] } },
    schema: {
      tags: ['customer'],
      operationId: 'logoutCustomer',
      summary: 'Log out: revoke this login token',
      description: 'The token is refused at once by the instance that answered, and by every other instance within AUTH_CACHE_TTL_MS (5 s by default).',
      response: { 204: Type.Null({ description: 'Revoked.' }), ...errorResponses(401) },
    },
  }, async (request, reply) => {
    await logins.logout(principalOf(request));
    return reply.code(204).send(null);
  });
};
