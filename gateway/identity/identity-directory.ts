// Which user lists an identity (`subjects`) and which teams list a group (`oidc_groups`,
// `oidc_admin_groups`): the store keeps neither as an index, so each gateway reads every user
// and team once, at the first token, and keeps the two maps in step with the store's change
// notices: a user or team made or changed anywhere is read again before the next lookup, and after
// a lost connection (a notice of anything) everything is read again.
import type { AccountStore, TeamRecord } from '../../core/store/accounts.ts';

type DirectoryStore = Pick<AccountStore, 'getUser' | 'getTeam' | 'listUsers' | 'listTeams' | 'onAccountChange' | 'caughtUp'>;

/** Teams a caller's groups place them in: as a member, and as a team admin. */
export interface GroupTeams {
  readonly members: readonly TeamRecord[];
  readonly admins: readonly TeamRecord[];
}

const PAGE = 500;

export class IdentityDirectory {
  readonly #store: DirectoryStore;
  /** Identity → the users listing it (more than one is a mistake, refused at lookup). */
  readonly #subjects = new Map<string, Set<string>>();
  /** User id → the identities it lists, to take them out when it changes. */
  readonly #userSubjects = new Map<string, readonly string[]>();
  readonly #teams = new Map<string, TeamRecord>();
  /** Group → ids of the teams listing it as members' and as admins' group. */
  readonly #memberGroups = new Map<string, Set<string>>();
  readonly #adminGroups = new Map<string, Set<string>>();
  /** Users and teams (`team:<id>`) changed since they were read. */
  readonly #changed = new Set<string>();
  #loaded = false;
  #loading: Promise<void> | undefined;
  readonly #unsubscribe: () => void;

  constructor(store: DirectoryStore) {
    this.#store = store;
    this.#unsubscribe = store.onAccountChange((subject) => {
      if (subject === null) this.#loaded = false;
      else this.#changed.add(subject);
    });
  }

  /** The ids of the users listing `subject`. */
  async usersOf(subject: string): Promise<readonly string[]> {
    await this.#current();
    return [...(this.#subjects.get(subject) ?? [])];
  }

  /** Once this resolves, the next lookups know every user and team made or changed anywhere before the call. */
  async caughtUp(): Promise<void> {
    await this.#store.caughtUp();
  }

  /** The teams `groups` name, each list in id order. */
  async teamsOf(groups: readonly string[]): Promise<GroupTeams> {
    await this.#current();
    return { members: this.#listing(this.#memberGroups, groups), admins: this.#listing(this.#adminGroups, groups) };
  }

  close(): void {
    this.#unsubscribe();
  }

  #listing(index: ReadonlyMap<string, ReadonlySet<string>>, groups: readonly string[]): TeamRecord[] {
    const ids = new Set<string>();
    for (const group of groups) for (const id of index.get(group) ?? []) ids.add(id);
    return [...ids]
      .sort()
      .map((id) => this.#teams.get(id))
      .filter((team) => team !== undefined);
  }

  /** Reads what changed, or everything when nothing was read yet; one reading at a time. */
  async #current(): Promise<void> {
    while (!this.#loaded || this.#changed.size > 0) {
      this.#loading ??= this.#read().finally(() => {
        this.#loading = undefined;
      });
      await this.#loading;
    }
  }

  async #read(): Promise<void> {
    try {
      await this.#readChanges();
    } catch (error) {
      this.#loaded = false; // what was read may be half done: all of it again next time
      throw error;
    }
  }

  async #readChanges(): Promise<void> {
    if (!this.#loaded) {
      this.#changed.clear();
      await this.#readAll();
      this.#loaded = true;
      return;
    }
    const changed = [...this.#changed];
    this.#changed.clear();
    for (const subject of changed) {
      if (subject.startsWith('team:')) {
        const id = subject.slice(5);
        this.#setTeam(id, await this.#store.getTeam(id));
      } else {
        const user = await this.#store.getUser(subject);
        this.#setUser(subject, user?.subjects ?? []);
      }
    }
  }

  async #readAll(): Promise<void> {
    this.#subjects.clear();
    this.#userSubjects.clear();
    this.#teams.clear();
    this.#memberGroups.clear();
    this.#adminGroups.clear();
    for (let after: string | null = null, first = true; first || after !== null; first = false) {
      const page = await this.#store.listUsers(after, PAGE);
      for (const user of page.items) this.#setUser(user.id, user.subjects ?? []);
      after = page.next;
    }
    for (let after: string | null = null, first = true; first || after !== null; first = false) {
      const page = await this.#store.listTeams(after, PAGE);
      for (const team of page.items) this.#setTeam(team.id, team);
      after = page.next;
    }
  }

  #setUser(id: string, subjects: readonly string[]): void {
    for (const subject of this.#userSubjects.get(id) ?? []) unlist(this.#subjects, subject, id);
    for (const subject of subjects) list(this.#subjects, subject, id);
    if (subjects.length > 0) this.#userSubjects.set(id, subjects);
    else this.#userSubjects.delete(id);
  }

  #setTeam(id: string, team: TeamRecord | undefined): void {
    const before = this.#teams.get(id);
    for (const group of before?.oidc_groups ?? []) unlist(this.#memberGroups, group, id);
    for (const group of before?.oidc_admin_groups ?? []) unlist(this.#adminGroups, group, id);
    if (!team) {
      this.#teams.delete(id);
      return;
    }
    this.#teams.set(id, team);
    for (const group of team.oidc_groups ?? []) list(this.#memberGroups, group, id);
    for (const group of team.oidc_admin_groups ?? []) list(this.#adminGroups, group, id);
  }
}

function list(index: Map<string, Set<string>>, key: string, id: string): void {
  const ids = index.get(key);
  if (ids) ids.add(id);
  else index.set(key, new Set([id]));
}

function unlist(index: Map<string, Set<string>>, key: string, id: string): void {
  const ids = index.get(key);
  ids?.delete(id);
  if (ids?.size === 0) index.delete(key);
}
