import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { LIST_INDEXES, LIST_PROJECTED } from '../core/job-list-index.js';
import type { DeploySettings } from './settings.js';

/**
 * The jobs list's indexes `jobStore.jobsList` asks for (core/job-list-index.ts, as `sqs-jobs store
 * create` makes them): all (true), none (false), or the first n of LIST_INDEXES, so an existing
 * stack gains them one per deploy (CloudFormation creates at most one index per table update).
 */
export function listIndexesOf(jobStore: DeploySettings['jobStore']): dynamodb.GlobalSecondaryIndexProps[] {
  const wanted = jobStore === false ? 0 : jobStore.jobsList === true ? 3 : Number(jobStore.jobsList);
  return Object.values(LIST_INDEXES)
    .slice(0, wanted)
    .map((index) => ({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.INCLUDE,
      nonKeyAttributes: [...LIST_PROJECTED],
    }));
}
