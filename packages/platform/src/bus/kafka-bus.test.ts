import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Partitioners, type PartitionerArgs } from 'kafkajs';
import { rememberingPartitioner } from './kafka-bus.ts';

function args(topic: string, partitions: number, key: string | null, partition?: number): PartitionerArgs {
  return {
    topic,
    partitionMetadata: Array.from({ length: partitions }, (_, i) => ({
      partitionErrorCode: 0,
      partitionId: i,
      leader: 0,
      replicas: [0],
      isr: [0],
    })),
    message: { key, value: 'v', ...(partition === undefined ? {} : { partition }) },
  };
}

describe('rememberingPartitioner', () => {
  test("chooses the default partitioner's partition for every key, also once remembered", () => {
    const reference = Partitioners.DefaultPartitioner();
    const remembering = rememberingPartitioner();
    for (const partitions of [1, 3, 12]) {
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < 50; i++) {
          const key = `workspace-${i}`;
          assert.equal(remembering(args('logs', partitions, key)), reference(args('logs', partitions, key)));
        }
      }
    }
  });

  test('an explicit partition wins, and keyless messages are spread as before', () => {
    const remembering = rememberingPartitioner();
    assert.equal(remembering(args('logs', 6, 'k', 4)), 4);
    const chosen = new Set(Array.from({ length: 12 }, () => remembering(args('logs', 3, null))));
    assert.equal(chosen.size, 3);
  });
});
