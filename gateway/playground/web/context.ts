// What every page gets from the shell: the signed-in caller, an API call that signs out on a
// rejected key, and the live region that announces what happened.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me } from './api.ts';

export interface Session {
  readonly key: string;
  readonly me: Me;
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Says `message` in the polite live region (and shows it in the status bar). */
  announce(message: string): void;
  refreshMe(): Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}
