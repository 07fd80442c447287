// Lengths of time in milliseconds, named once: budget periods, rate-limit windows, usage days and
// retention all count in them. (The Lua scripts receive the windows from TypeScript.)
export const SECOND_MS = 1_000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
