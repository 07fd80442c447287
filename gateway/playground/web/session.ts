// The API key lives in sessionStorage only: it survives a reload of the tab, is gone when the
// tab closes, and is never put in a URL, a cookie or a log.
const STORAGE_KEY = 'tollgate.apiKey';

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage disabled: the user signs in again on each load
  }
}

export function storeKey(key: string): void {
  try {
    sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    // Storage disabled: the key stays in memory for this page only.
  }
}

export function forgetKey(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing was stored.
  }
}
