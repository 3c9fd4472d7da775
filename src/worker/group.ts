/** Group leases (or anything holding a message) by the queue they came from. */
export function groupByQueue<T extends { message: { queueUrl: string } }>(items: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const list = groups.get(item.message.queueUrl);
    if (list === undefined) groups.set(item.message.queueUrl, [item]);
    else list.push(item);
  }
  return groups;
}
