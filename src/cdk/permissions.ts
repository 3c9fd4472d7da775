/**
 * The SQS actions the worker calls on the queues it consumes, and nothing else. Batch calls are
 * authorised by their single forms. SendMessage: a message with no receive left is re-sent rather
 * than handed back, a job over its tenant's cap is re-sent later, and ctx.fanOut sends children and
 * completions to the queue it consumes.
 */
export const WORKER_QUEUE_ACTIONS = [
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueAttributes',
  'sqs:SendMessage',
];

/** On the DLQs: the worker moves a poisonous message there itself, with its reason. */
export const WORKER_DLQ_ACTIONS = ['sqs:SendMessage', 'sqs:GetQueueUrl'];

/**
 * The job store's item actions: the worker reads and updates records and counts fan-out children
 * (TransactWriteItems is authorised by the PutItem and UpdateItem inside it; PartiQLUpdate and
 * PartiQLInsert: state changes made together go out as one BatchExecuteStatement of UPDATEs, and
 * INSERTs for `waiting`, e.g. a fan-out's children). No Scan, Query, DeleteItem or table actions.
 */
export const WORKER_STORE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:UpdateItem',
  'dynamodb:PutItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:PartiQLUpdate',
  'dynamodb:PartiQLInsert',
];

/** The dedupe lock on the job table (DynamoLock, a Lambda function's): its keys are put, read, updated and deleted. */
export const LOCK_STORE_ACTIONS = ['dynamodb:DeleteItem'];

/** With `jobStore.schedules`, the tick's (src/schedules/): Query on the due index only, DeleteItem for a kept job once it is sent. */
export const WORKER_TICK_ACTIONS = ['dynamodb:Query', 'dynamodb:DeleteItem'];

/** What a producer sends with: SendMessage (GetQueueAttributes: admission control reads the queue's depth). */
export const PRODUCER_QUEUE_ACTIONS = ['sqs:SendMessage', 'sqs:GetQueueAttributes'];

/**
 * A producer records `waiting` for a job it enqueues with `track: true` (one UpdateItem, or for
 * many at once, PartiQL INSERTs sent together), keeps a job put off beyond SQS's 900 s delay
 * (one conditional PutItem), and for keys on enqueue reads a key and its holder's record (GetItem),
 * takes it (PutItem, or with a debounced burst's job in a TransactWriteItems of two Puts) and lets
 * go of it or cancels a replaced kept job (DeleteItem).
 */
export const PRODUCER_STORE_ACTIONS = [
  'dynamodb:UpdateItem',
  'dynamodb:PartiQLInsert',
  'dynamodb:PutItem',
  'dynamodb:GetItem',
  'dynamodb:DeleteItem',
];
