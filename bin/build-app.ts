// `npm run build` (after the Playground): compiles bin/, core/, gateway/, operator/ and worker/ into
// dist/app with tsconfig.build.json, and copies beside the compiled modules the files they read
// by a path relative to themselves (the Lua scripts, the o200k rank table), so dist/app runs as
// the sources do.
import { spawnSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const APP = join(ROOT, 'dist', 'app');

/** Files read at run time next to the module that reads them. */
export const RUNTIME_FILES = ['core/store/redis/lua', 'gateway/metering/o200k-ranks.bin'];

const tsc = spawnSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
for (const path of RUNTIME_FILES) cpSync(join(ROOT, path), join(APP, path), { recursive: true });
