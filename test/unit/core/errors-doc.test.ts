import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT_STATUS } from '../../../src/cli/program.js';
import { ERROR_CODES } from '../../../src/core/errors.js';

// docs/reference/errors.md is the catalogue users read: one row per code, and the CLI's exit codes as the CLI has them.
const doc = readFileSync('docs/reference/errors.md', 'utf8');
const rows = new Map(
  [...doc.matchAll(/^\| `([A-Z_]+)` \|(.*)\|$/gm)].map((m) => [m[1]!, m[2]!.split('|').map((cell) => cell.trim())] as const),
);

describe('the errors reference', () => {
  it('has a row for every error code, and no code that does not exist', () => {
    expect([...rows.keys()].sort()).toEqual([...ERROR_CODES].sort());
  });

  it("gives each CLI exit code the CLI's own", () => {
    for (const [code, cells] of rows) {
      if (cells.length < 5) continue; // the handler table has no CLI column
      expect(cells.at(-1), code).toBe(String(EXIT_STATUS[code as keyof typeof EXIT_STATUS] ?? 1));
    }
  });
});
