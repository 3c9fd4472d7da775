export { createLambdaHandler } from './handler.js';
export type { LambdaHandlerOptions } from './options.js';
export type { LambdaHandler, SqsEvent, SqsBatchResponse } from './event.js';
