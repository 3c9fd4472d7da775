import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseSync } from '@swc/core';

/** A node of swc's TypeScript AST, loosely typed: what the architecture tests look at. */
export type Node = { type?: string; span?: { start: number }; [key: string]: unknown };

/** Parse TypeScript with swc; `lineOf` gives a node's 1-based line in `source`. */
export function parse(source: string): { ast: Node; lineOf: (n: Node) => number } {
  const ast = parseSync(source, { syntax: 'typescript' }) as unknown as Node;
  // swc's spans count from the start of everything it parsed in this process: make them relative.
  const base = ast.span!.start;
  return { ast, lineOf: (n) => source.slice(0, (n.span?.start ?? base) - base).split('\n').length };
}

/** Visit every node under `node` with its nearest parent node. */
export function walk(node: unknown, visit: (n: Node, parent: Node | undefined) => void, parent?: Node): void {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, visit, parent);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const n = node as Node;
  if (typeof n.type === 'string') visit(n, parent);
  for (const [key, value] of Object.entries(n))
    if (key !== 'span' && typeof value === 'object') walk(value, visit, typeof n.type === 'string' ? n : parent);
}

/** An identifier's (or private name's) text. */
export const name = (n: unknown): string | undefined => {
  const node = n as Node | undefined;
  return node?.type === 'Identifier' || node?.type === 'PrivateName' ? (node.value as string) : undefined;
};

/** Every .ts file under `dir`. */
export function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}
