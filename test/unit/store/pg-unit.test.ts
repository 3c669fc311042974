/**
 * The PostgreSQL unit's scheduling without a database: which statements it
 * sends, in order, for held writes and reads that name a part of a table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { combine, PgUnit, touches } from '../../../src/store/pg/unit.js';

function recording(): { unit: PgUnit; sent: string[] } {
  const sent: string[] = [];
  const unit = new PgUnit(async <R>(text: string) => {
    sent.push(text.split('\n')[0]!.slice(0, 40));
    return [] as R[];
  });
  return { unit, sent };
}

const ensure = { text: 'INSERT INTO users (id) VALUES ($1)', values: ['u1'], writes: ['users/blank'] };

test('a part of a table touches its table, and its table every part; two parts do not touch', () => {
  assert.equal(touches('users/blank', 'users'), true);
  assert.equal(touches('users', 'users/reached'), true);
  assert.equal(touches('users', 'users'), true);
  assert.equal(touches('users/blank', 'users/reached'), false);
  assert.equal(touches('users/blank', 'invites'), false);
});

test('a read of users/reached runs alone while a blank user row is held; the last statement carries it', async () => {
  const { unit, sent } = recording();
  await unit.query.hold!(ensure);
  await unit.query('SELECT FROM users WHERE phone = $1', ['+1'], ['users/reached']);
  await unit.query.last!('INSERT INTO messages', [], ['messages']);
  await unit.commit();
  assert.deepEqual(sent, ['SELECT FROM users WHERE phone = $1', 'WITH held_0 AS (INSERT INTO users (id) V']);
});

test('a read of the whole users table first sends BEGIN and the held row', async () => {
  const { unit, sent } = recording();
  await unit.query.hold!(ensure);
  await unit.query('SELECT 1 FROM users WHERE id = $1', ['u1'], ['users']);
  await unit.commit();
  assert.deepEqual(sent, ['BEGIN', 'WITH held_0 AS (INSERT INTO users (id) V', 'SELECT 1 FROM users WHERE id = $1', 'COMMIT']);
});

test('combine renumbers each part past the values before it, the same every time it is asked', () => {
  const audit = { text: 'INSERT INTO a (x, y) VALUES ($1, $2)', values: [1, 2] };
  const last = { text: 'WITH b AS (SELECT $1 AS v) INSERT INTO m SELECT v, $2 FROM b', values: ['v', 'w'] };
  const expected = {
    text: 'WITH held_0 AS (INSERT INTO a (x, y) VALUES ($1, $2)),\nb AS (SELECT $3 AS v) INSERT INTO m SELECT v, $4 FROM b',
    values: [1, 2, 'v', 'w'],
  };
  assert.deepEqual(combine([audit], last), expected);
  // Asked again (the combined text is kept): the same statement, the new values.
  assert.deepEqual(combine([audit], { ...last, values: ['x', 'y'] }), { ...expected, values: [1, 2, 'x', 'y'] });
  assert.deepEqual(combine([audit, audit]), {
    text: 'WITH held_0 AS (INSERT INTO a (x, y) VALUES ($1, $2)),\nheld_1 AS (INSERT INTO a (x, y) VALUES ($3, $4))\nSELECT 1',
    values: [1, 2, 1, 2],
  });
});

test('combine never reuses a text kept for another number of values', () => {
  const one = { text: 'INSERT INTO t SELECT $1', values: [1] };
  assert.equal(combine([one], one).text, 'WITH held_0 AS (INSERT INTO t SELECT $1)\nINSERT INTO t SELECT $2');
  // The same text with two values (the second unused by the text): its successor moves past both.
  assert.equal(combine([{ ...one, values: [1, 2] }], one).text, 'WITH held_0 AS (INSERT INTO t SELECT $1)\nINSERT INTO t SELECT $3');
});
