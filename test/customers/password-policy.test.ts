import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordProblem } from '../../src/modules/customers/customer.rules.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * The customer password policy as decisions.md promises it: 12 to 256 characters, not containing
 * the username or the e-mail's local part, at least 4 different characters (422 naming password).
 */
describe('passwordProblem (unit)', () => {
  const LOCAL_PART = "must not contain the e-mail address's local part";

  it.each([
    ['my friend bob likes brie', 'robert.m', 'bob@example.com'],
    ['my friend BOB likes brie', 'robert.m', 'bob@example.com'],
    ['my friend ｂｏｂ likes brie', 'robert.m', 'bob@example.com'],
    ['my friend bob likes brie', 'robert.m', '  Bob@Example.com '],
    ['my friend bob likes brie', 'robert.m', 'bob+cheese@example.com'],
    ['bob+cheese is my secret', 'robert.m', 'bob+cheese@example.com'],
    ['ann likes her camembert', 'anne.m', 'ann@example.com'],
    ['marie.dupont!! comté', 'md75', 'marie.dupont@example.com'],
    ['my "bo@b" is a strange one', 'quoted', '"bo@b"@example.com'],
  ])('refuses %j (username %j, e-mail %j)', (password, username, email) => {
    expect(passwordProblem(password, username, email)).toBe(LOCAL_PART);
  });

  it('does not look for a local part of one or two characters: it would refuse passwords at random', () => {
    expect(passwordProblem('a long enough secret', 'robert.m', 'a@example.com')).toBeNull();
    expect(passwordProblem('a long enough secret', 'robert.m', 'se@example.com')).toBeNull();
    expect(passwordProblem('a long enough secret', 'robert.m', 'sec@example.com')).toBe(LOCAL_PART);
  });

  it('refuses the username regardless of case and Unicode form, and fewer than 4 different characters', () => {
    expect(passwordProblem('my GOUDA.lover pass', 'gouda.lover', 'x@example.com')).toBe('must not contain the username');
    expect(passwordProblem('my ｇｏｕｄａ.lover pass', 'gouda.lover', 'x@example.com')).toBe('must not contain the username');
    expect(passwordProblem('abcabcabcabcabc', 'gouda.lover', 'x@example.com')).toBe('must use at least 4 different characters');
    expect(passwordProblem('correct horse battery staple', 'marie.dupont', 'marie@example.com')).toBeNull();
  });
});

describe('sign-up (HTTP) refuses a password containing a short e-mail local part', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('422 naming password, and creates no account', async () => {
    const accounts = () => t.database.db.selectFrom('accounts').select('id').execute();
    const before = await accounts();
    for (const [email, password] of [['bob@example.com', 'my friend bob likes brie'], ['bob+shop@example.com', 'Bob and his 12 cheeses']]) {
      const res = await t.http.post('/v2/customer', { json: { username: 'robert.martin', email, password, firstName: 'Robert', lastName: 'Martin' } });
      expect(res.status, email).toBe(422);
      expect(res.body.errors, email).toEqual([{ field: 'password', message: "must not contain the e-mail address's local part" }]);
    }
    expect(await accounts()).toEqual(before);
    const accepted = await t.http.post('/v2/customer', { json: { username: 'robert.martin', email: 'bob@example.com', password: 'my friend likes brie', firstName: 'Robert', lastName: 'Martin' } });
    expect(accepted.status, accepted.text).toBe(201);
  });
});
