// Who is making a request: the user and the key it authenticated with, looked up once by the
// HTTP layer and handed to billing and the routes.
import type { ApiKeyRecord, UserRecord } from '../../core/store/accounts.ts';

export interface Caller {
  readonly user: UserRecord;
  readonly key: ApiKeyRecord;
}
