/*
 * A schedule's rule as EventBridge Scheduler writes it: `cron(minutes hours day-of-month month
 * day-of-week year)` or `rate(n unit)`. EventBridge's finest grain is a minute, it has no seconds,
 * it cannot restrict both the day of the month and the day of the week (one of them is `?`), and it
 * numbers the days of the week 1-7 from Sunday where cron numbers them 0-7 (0 and 7 are Sunday).
 * What it cannot say is said back, and the stack is not made (a synth error).
 */

/** The expression, or why EventBridge Scheduler cannot express the rule. */
export type Expression = { readonly expression: string } | { readonly problem: string };

const NICKNAMES: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** `cron` (5 fields, or 6 with seconds first, as defineSchedule takes it) as EventBridge's cron(). */
export function cronExpression(cron: string): Expression {
  let fields = (NICKNAMES[cron.trim().toLowerCase()] ?? cron).trim().split(/\s+/);
  if (fields.length === 6) {
    if (fields[0] !== '0') return { problem: `cron "${cron}": EventBridge Scheduler has no seconds (its finest grain is a minute)` };
    fields = fields.slice(1);
  }
  if (fields.length !== 5) return { problem: `cron "${cron}": EventBridge Scheduler takes 5 fields (minute hour day month weekday)` };
  // A step from `*` starts at the field's first value in EventBridge's writing (`*/15` minutes: `0/15`).
  const from = (field: string, first: number) => field.replace(/^\*\//, `${first}/`);
  const [minute, hour, day, month] = [from(fields[0]!, 0), from(fields[1]!, 0), from(fields[2]!, 1), from(fields[3]!, 1)];
  const weekday = fields[4]!;
  const anyDay = day === '*' || day === '?';
  const anyWeekday = weekday === '*' || weekday === '?';
  if (!anyDay && !anyWeekday)
    return { problem: `cron "${cron}": EventBridge Scheduler cannot restrict both the day of the month and the day of the week` };
  if (anyWeekday) return { expression: `cron(${minute} ${hour} ${day === '?' ? '*' : day} ${month} ? *)` };
  const days = weekdays(weekday);
  if (typeof days !== 'string') return { problem: `cron "${cron}": ${days.problem}` };
  return { expression: `cron(${minute} ${hour} ? ${month} ${days} *)` };
}

/** Cron's day-of-week field (0-7 from Sunday, names, lists, ranges, `nL`, `n#k`) in EventBridge's numbering (1-7 from Sunday). */
function weekdays(field: string): string | { problem: string } {
  const out: string[] = [];
  for (const part of field.split(',')) {
    const day = weekday(part);
    if (day === undefined)
      return { problem: `the weekday "${part}" is not one EventBridge Scheduler can be given (a day, a list, a range, nL or n#k)` };
    if (typeof day !== 'string') return day;
    out.push(day);
  }
  return out.join(',');
}

/** One part of the day-of-week list, renumbered; undefined when it is none of the forms EventBridge takes. */
function weekday(part: string): string | { problem: string } | undefined {
  const number = (n: string) => (Number(n) % 7) + 1;
  if (/^[A-Za-z]{3}(-[A-Za-z]{3})?$/.test(part)) return part.toUpperCase();
  const one = /^([0-7])(L|#[1-5])?$/.exec(part);
  if (one !== null) return `${number(one[1]!)}${one[2] ?? ''}`;
  const range = /^([0-7])-([0-7])$/.exec(part);
  if (range === null) return undefined;
  const from = number(range[1]!);
  // Up to cron's 7 (Sunday again): to Saturday, and Sunday, EventBridge's 1.
  const [to, sunday] = range[2] === '7' ? [7, from > 1] : [number(range[2]!), false];
  if (from > to) return { problem: `the weekday range ${part} wraps past Saturday, which EventBridge Scheduler does not take` };
  return sunday ? `${from}-${to},1` : `${from}-${to}`;
}

/** `every` (in seconds) as EventBridge's rate(): whole minutes only. */
export function rateExpression(everyS: number): Expression {
  if (everyS % 60 !== 0)
    return { problem: `every ${everyS} s: EventBridge Scheduler's finest grain is a minute (a rate of whole minutes)` };
  const [n, unit] =
    everyS % 86_400 === 0 ? [everyS / 86_400, 'day'] : everyS % 3_600 === 0 ? [everyS / 3_600, 'hour'] : [everyS / 60, 'minute'];
  return { expression: `rate(${n} ${unit}${n === 1 ? '' : 's'})` };
}
