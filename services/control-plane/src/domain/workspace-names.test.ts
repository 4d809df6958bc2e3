import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatName, plainName } from './workspace-names.ts';

test('display shows the name exactly as entered', () => {
  assert.equal(formatName('<b>Search</b>  team\t🚀', 'search', 'display'), '<b>Search</b>  team\t🚀');
});

test('plain removes markup tags, and a line-break tag separates words', () => {
  assert.equal(plainName('<b>Search</b> <i class="x">team</i>', 'slug'), 'Search team');
  assert.equal(plainName('Search<br/>team', 'slug'), 'Search team');
  assert.equal(plainName('R&D <a href="https://example.com">docs</a>', 'slug'), 'R&D docs');
});

test('plain keeps angle brackets that are not tags', () => {
  assert.equal(plainName('latency < 200 ms > p99', 'slug'), 'latency < 200 ms > p99');
});

test('plain turns tabs and line breaks into spaces and drops other control and invisible characters', () => {
  assert.equal(plainName('Search\tteam\r\nEU', 'slug'), 'Search team EU');
  assert.equal(plainName('Pay\u0000ments\u200b team\u202e', 'slug'), 'Payments team');
});

test('plain collapses whitespace runs, no-break spaces included, and trims the ends', () => {
  assert.equal(plainName('  Search \u00a0\u3000  team  ', 'slug'), 'Search team');
});

test('plain folds full-width and styled letters to ordinary ones, and keeps other scripts and emoji', () => {
  assert.equal(plainName('ＳＥＡＲＣＨ 𝐭𝐞𝐚𝐦', 'slug'), 'SEARCH team');
  assert.equal(plainName('Équipe 検索 🚀', 'slug'), 'Équipe 検索 🚀');
});

test('a name that is only markup falls back to the slug', () => {
  assert.equal(plainName('<b></b>\u200b', 'search-team'), 'search-team');
});
