// A team's users, read through the list of users: teams are found from their users (a user names
// its team), and an organisation's users are few enough to read through for an admin's page.
import type { AccountStore, UserRecord } from './accounts.ts';

/** Users read per page. */
const PAGE = 500;

/** The users whose `team` is `team`, by id. */
export async function teamMembers(accounts: Pick<AccountStore, 'listUsers'>, team: string): Promise<UserRecord[]> {
  const members: UserRecord[] = [];
  let after: string | null = null;
  do {
    const page = await accounts.listUsers(after, PAGE);
    for (const user of page.items) if (user.team === team) members.push(user);
    after = page.next;
  } while (after !== null);
  return members;
}
