// This build's version, as package.json says: read once, from the sources' root or, for the
// compiled app (dist/app/core/), from the checkout's root three folders up.
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const PackageJson = z.object({ version: z.string() });

function readVersion(): string {
  for (const path of ['../package.json', '../../../package.json']) {
    try {
      return PackageJson.parse(JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'))).version;
    } catch {
      // Not there (or not ours): the next place.
    }
  }
  return 'unknown';
}

export const VERSION = readVersion();
