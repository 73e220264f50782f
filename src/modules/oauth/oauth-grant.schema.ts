import Type from 'typebox';
import { SCOPES } from '../../kernel/scopes.js';

export const AuthorizedApp = Type.Object(
  {
    clientId: Type.String({ description: 'The application\'s public OAuth `client_id`.', examples: ['cl_4f3Jx9QbU0tEw2r8Yk1m2Q'] }),
    name: Type.String({ description: 'The name it was registered under.' }),
    scopes: Type.Array(Type.Enum([...SCOPES]), { description: 'What it may do on the account: every scope of its grants in force (a token never holds more than the account\'s role allows today).' }),
    authorizedAt: Type.String({ format: 'date-time', description: 'When the account authorized it (the oldest grant still in force).' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it last obtained a token (a code exchanged, a refresh, an implicit grant). Each use of an access token is not recorded.' }),
  },
  { $id: 'AuthorizedApp' },
);
