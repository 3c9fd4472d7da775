/**
 * `instanceof` that holds across copies of sqs-jobs. An app can load the package twice: tsx's
 * `tsImport`, a bundler, a monorepo with two installs, CommonJS beside ES modules. Each copy has
 * classes of its own, so a plain `error instanceof UnrecoverableError` asked by one copy of an
 * error made by the other answers false, and a job that asked to go to the DLQ at once is retried.
 *
 * A branded class answers `instanceof` by a brand its prototype carries under a key from the
 * global symbol registry (`Symbol.for`), which every copy in the process shares; the brands of a
 * class's ancestors are inherited with its prototype. Brands are names that stay the same from one
 * version to the next ('sqs-jobs/UnrecoverableError'). A subclass the app writes itself is not
 * branded, and is recognised as JavaScript always did (its own prototype chain).
 */
const BRANDS = Symbol.for('sqs-jobs.brands');

interface Branded {
  readonly [BRANDS]?: readonly string[];
}

// biome-ignore lint/suspicious/noExplicitAny: any constructor, whatever its parameters
type Class = abstract new (...args: any[]) => object;

/** Brand `cls` (call it from the class's static block): `instanceof cls` then holds for instances of any copy's `cls`. */
export function brand(cls: Class, name: string): void {
  const inherited = (cls.prototype as Branded)[BRANDS] ?? [];
  Object.defineProperty(cls.prototype, BRANDS, { value: Object.freeze([...inherited, name]) });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: Class, value: unknown): boolean {
      if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
      // Only a class branded itself is matched by brand: an app's subclass of a branded class is not.
      if (!Object.hasOwn(this.prototype, BRANDS)) return false;
      const own = (this.prototype as Branded)[BRANDS]!.at(-1)!;
      const brands = isObject(value) ? (value as Branded)[BRANDS] : undefined;
      return Array.isArray(brands) && brands.includes(own);
    },
  });
}

function isObject(value: unknown): value is object {
  return (typeof value === 'object' || typeof value === 'function') && value !== null;
}
