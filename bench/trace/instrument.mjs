// A module hook for bench/trace/returns.ts: every src/ file that tsx compiles is given a call to
// globalThis.__trace(file) where control enters it — at the start of each function, and where an
// `await` resumes — so the trace sees the order in which one message's work moves between files.
// Register after tsx: node --import tsx --import ./bench/trace/register.mjs bench/trace/returns.ts
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { parseSync } = require('@swc/core');
const root = process.env.TRACE_ROOT ?? process.cwd();

const FUNCTIONS = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ClassMethod',
  'PrivateMethod',
  'Constructor',
  'GetterProperty',
  'SetterProperty',
  'MethodProperty',
]);

function instrument(js, file) {
  const SENTINEL = '0;\n';
  const text = Buffer.from(SENTINEL + js, 'utf8');
  // TypeScript syntax: tsx hands this hook plain JavaScript on some Nodes and the TypeScript source on others (26),
  // which is compiled after the hooks; the inserted calls are valid in both.
  const ast = parseSync(text.toString('utf8'), { syntax: 'typescript' });
  const base = ast.span.start; // the sentinel is byte 0
  const inserts = []; // [byte offset, text, visit order]
  const tag = JSON.stringify(file);
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    if (FUNCTIONS.has(node.type)) {
      const body = node.body ?? node.function?.body;
      if (body?.type === 'BlockStatement' || body?.type === 'FunctionBody')
        inserts.push([body.span.start - base + 1, `__trace(${tag});`, inserts.length]);
      else if (body && node.type === 'ArrowFunctionExpression') {
        inserts.push([body.span.start - base, `(__trace(${tag}), `, inserts.length]);
        inserts.push([body.span.end - base, ')', inserts.length]);
      }
    }
    if (node.type === 'AwaitExpression') {
      inserts.push([node.span.start - base, `__traceResume(${tag}, `, inserts.length]);
      inserts.push([node.span.end - base, ')', inserts.length]);
    }
    for (const [key, value] of Object.entries(node)) if (key !== 'span' && typeof value === 'object') visit(value);
  };
  visit(ast.body);
  // Applied from the end, so earlier offsets stay right: what is applied later lands in front. At
  // one offset the text must read closers (inner first), then openers (outer first).
  const closer = (x) => (x[1] === ')' ? 1 : 0);
  inserts.sort((a, b) => b[0] - a[0] || closer(a) - closer(b) || (closer(a) ? a[2] - b[2] : b[2] - a[2]));
  const parts = [];
  let end = text.length;
  for (const [at, add] of inserts) {
    parts.push(text.subarray(at, end), Buffer.from(add));
    end = at;
  }
  parts.push(text.subarray(SENTINEL.length, end));
  return Buffer.concat(parts.reverse()).toString('utf8');
}

export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  if (!url.startsWith('file:') || !url.includes('/src/') || url.includes('/node_modules/')) return loaded;
  const path = fileURLToPath(url);
  if (!path.startsWith(`${root}/src/`) || !path.endsWith('.ts')) return loaded;
  const file = path.slice(root.length + 1);
  return { ...loaded, source: instrument(String(loaded.source), file) };
}
