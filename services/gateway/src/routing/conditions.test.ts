import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchesQuery } from './conditions.ts';

const subject = {
  metadata: { plan: 'paid', tier: '3', beta: 'true' },
  params: { model: 'gpt-x', max_tokens: 500, stream: true, response_format: { type: 'json_object' } },
};

test('equality, shorthand and explicit, on metadata and nested params', () => {
  assert.equal(matchesQuery({ 'metadata.plan': 'paid' }, subject), true);
  assert.equal(matchesQuery({ 'metadata.plan': { $eq: 'free' } }, subject), false);
  assert.equal(matchesQuery({ 'params.response_format.type': 'json_object' }, subject), true);
  assert.equal(matchesQuery({ 'params.stream': true }, subject), true);
  assert.equal(matchesQuery({ 'metadata.plan': { $ne: 'free' } }, subject), true);
});

test('metadata strings compare with numbers and booleans by value', () => {
  assert.equal(matchesQuery({ 'metadata.tier': { $gte: 3 } }, subject), true);
  assert.equal(matchesQuery({ 'metadata.tier': { $gt: 3 } }, subject), false);
  assert.equal(matchesQuery({ 'metadata.tier': 3 }, subject), true);
  assert.equal(matchesQuery({ 'metadata.beta': true }, subject), true);
});

test('set membership, ranges and existence', () => {
  assert.equal(matchesQuery({ 'params.model': { $in: ['a', 'gpt-x'] } }, subject), true);
  assert.equal(matchesQuery({ 'params.model': { $nin: ['gpt-x'] } }, subject), false);
  assert.equal(matchesQuery({ 'params.max_tokens': { $gt: 100, $lt: 1000 } }, subject), true);
  assert.equal(matchesQuery({ 'params.max_tokens': { $lte: 499 } }, subject), false);
  assert.equal(matchesQuery({ 'params.temperature': { $exists: false } }, subject), true);
  assert.equal(matchesQuery({ 'metadata.plan': { $exists: true } }, subject), true);
  // A missing field is not greater than anything.
  assert.equal(matchesQuery({ 'params.temperature': { $gt: -1 } }, subject), false);
});

test('$and / $or combine; several fields must all hold', () => {
  assert.equal(
    matchesQuery({ $or: [{ 'metadata.plan': 'free' }, { 'params.model': 'gpt-x' }] }, subject),
    true,
  );
  assert.equal(
    matchesQuery({ $and: [{ 'metadata.plan': 'paid' }, { 'params.model': 'other' }] }, subject),
    false,
  );
  assert.equal(matchesQuery({ 'metadata.plan': 'paid', 'params.model': 'other' }, subject), false);
});

test('inherited object properties are not fields', () => {
  assert.equal(matchesQuery({ 'metadata.constructor': { $exists: true } }, subject), false);
  assert.equal(matchesQuery({ 'params.model.length': { $exists: true } }, subject), false);
});
