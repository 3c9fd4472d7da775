import { describe, expect, it } from 'vitest';
import { ATTR_DLQ_REASON } from '../../../src/core/dead-letter.js';
import { ATTR_FIRST_SENT_AT } from '../../../src/core/delivery.js';
import { ConfigError } from '../../../src/core/errors.js';
import type { ReceivedMessage } from '../../../src/core/message.js';
import {
  ARCHIVE_FORMAT,
  fromRecord,
  letterKey,
  messageIdOfKey,
  parseArchiveUrl,
  replayedKey,
  toRecord,
} from '../../../src/ops/archive-format.js';

describe('parseArchiveUrl', () => {
  it('reads a bucket and a prefix that ends in / (or none)', () => {
    expect(parseArchiveUrl('s3://my-bucket', '--to')).toEqual({ bucket: 'my-bucket', prefix: '' });
    expect(parseArchiveUrl('s3://my-bucket/', '--to')).toEqual({ bucket: 'my-bucket', prefix: '' });
    expect(parseArchiveUrl('s3://my.bucket/dlq/orders', '--to')).toEqual({ bucket: 'my.bucket', prefix: 'dlq/orders/' });
    expect(parseArchiveUrl('s3://b12/dlq/', '--to')).toEqual({ bucket: 'b12', prefix: 'dlq/' });
  });

  it('refuses what is not one, naming the flag and the value', () => {
    expect(() => parseArchiveUrl('https://bucket/x', '--to')).toThrow(ConfigError);
    expect(() => parseArchiveUrl('bucket/x', '--from')).toThrow('--from: must be s3://bucket/prefix (got "bucket/x")');
    expect(() => parseArchiveUrl('s3://My_Bucket/x', '--to')).toThrow('"My_Bucket" is not an S3 bucket name');
  });
});

describe('a record', () => {
  const m: ReceivedMessage = {
    queueUrl: 'http://127.0.0.1:4566/000000000000/jobs-dlq',
    messageId: 'd1c6a3c2-0000-4000-8000-000000000001',
    receiptHandle: 'rh',
    body: '{"v":1,"id":"j-1","job":"refund","args":{"n":1},"enqueuedAt":"2026-11-24T00:00:00.000Z"}',
    receiveCount: 2,
    sentAt: Date.parse('2026-12-01T00:00:00.000Z'),
    groupId: undefined,
    attributes: {
      [ATTR_DLQ_REASON]: { DataType: 'String', StringValue: 'unrecoverable' },
      [ATTR_FIRST_SENT_AT]: { DataType: 'Number', StringValue: String(Date.parse('2026-11-24T00:00:00.000Z')) },
      blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 1, 254, 255]) },
    },
    awsTraceHeader: 'Root=1-5759e988-bd862e3fe1be46a994272793',
  };

  it('keeps the body, every attribute (binary in base64), the ids, times and reason, and reads back as the message it was', () => {
    const record = toRecord(m, new Date('2026-12-10T00:00:00.000Z'));
    expect(record).toMatchObject({
      format: ARCHIVE_FORMAT,
      archivedAt: '2026-12-10T00:00:00.000Z',
      dlqUrl: m.queueUrl,
      messageId: m.messageId,
      body: m.body,
      sentAt: '2026-12-01T00:00:00.000Z',
      firstSentAt: '2026-11-24T00:00:00.000Z',
      receiveCount: 2,
      awsTraceHeader: m.awsTraceHeader,
      letter: { jobName: 'refund', jobId: 'j-1', reason: 'unrecoverable' },
    });
    expect(record.attributes.blob).toEqual({ DataType: 'Binary', BinaryValue: 'AAH+/w==' });
    const back = fromRecord(JSON.stringify(record));
    expect(back.m).toEqual({ ...m, receiptHandle: '' });
    expect(back.letter).toMatchObject({ jobId: 'j-1', reason: 'unrecoverable', messageId: m.messageId });
  });

  it('refuses text of another format', () => {
    expect(() => fromRecord('{"format":"something-else"}')).toThrow();
    expect(() => fromRecord('not json')).toThrow();
  });

  it('is keyed by the DLQ message id, as is its replay mark', () => {
    expect(letterKey('dlq/', m.messageId)).toBe(`dlq/dead-letters/${m.messageId}.json`);
    expect(replayedKey('', m.messageId)).toBe(`replayed/${m.messageId}.json`);
    expect(messageIdOfKey(letterKey('a/b/', m.messageId))).toBe(m.messageId);
    expect(messageIdOfKey(replayedKey('a/', m.messageId))).toBe(m.messageId);
    expect(messageIdOfKey('a/other/x.json')).toBeUndefined();
  });
});
