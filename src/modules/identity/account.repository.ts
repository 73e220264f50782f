import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { nowIso } from '../../db/columns.js';
import type { Role } from './scopes.js';

export interface AccountRecord {
  id: number;
  username: string;
  role: Role;
}

export class AccountRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async findByUsername(username: string): Promise<AccountRecord | undefined> {
    return this.db
      .selectFrom('accounts')
      .select(['id', 'username', 'role'])
      .where('username', '=', username)
      .executeTakeFirst();
  }

  async findById(id: number): Promise<AccountRecord | undefined> {
    return this.db.selectFrom('accounts').select(['id', 'username', 'role']).where('id', '=', id).executeTakeFirst();
  }

  async create(input: { username: string; passwordHash: string; role: Role; email?: string | null }): Promise<AccountRecord> {
    const now = nowIso();
    return this.db
      .insertInto('accounts')
      .values({
        username: input.username,
        email: input.email ?? null,
        password_hash: input.passwordHash,
        role: input.role,
        created_at: now,
        updated_at: now,
      })
      .returning(['id', 'username', 'role'])
      .executeTakeFirstOrThrow();
  }
}
