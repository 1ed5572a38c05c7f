/**
 * Worker thread that writes usage rows with its own better-sqlite3 connection to the daemon's database
 * (WAL: the main connection keeps reading and pruning meanwhile), so inserting rows, committing and WAL
 * checkpoints never run on the daemon's event loop. Protocol (writer-protocol.ts): `rows` batches in order,
 * each written in one transaction and acknowledged with `done` on the port; `close` closes the connection
 * after every earlier batch and sets the shared signal, which the main thread may be blocked waiting on.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import {
  FIELDS,
  insertSql,
  ROWS_PER_STATEMENT,
  SIGNAL_CLOSED,
  SIGNAL_FAILED,
  type FromWriter,
  type ToWriter,
  type WriterInit,
} from './writer-protocol.js';

const init = workerData as WriterInit;
const { port, signal } = init;

function setSignal(value: number): void {
  Atomics.store(signal, 0, value);
  Atomics.notify(signal, 0);
}

function reply(msg: FromWriter): void {
  port.postMessage(msg);
}

let db: Database.Database;
try {
  db = new Database(init.file, { fileMustExist: true });
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(init.busyTimeoutMs))}`);
  db.pragma('synchronous = NORMAL');
} catch (err) {
  reply({ t: 'fatal', error: err instanceof Error ? err.message : String(err) });
  setSignal(SIGNAL_FAILED);
  throw err;
}

const many = db.prepare(insertSql(ROWS_PER_STATEMENT));
const one = db.prepare(insertSql(1));
const SPAN = FIELDS * ROWS_PER_STATEMENT;
const writeBatch = db.transaction((data: unknown[]) => {
  let i = 0;
  for (; i + SPAN <= data.length; i += SPAN) many.run(data.slice(i, i + SPAN));
  for (; i < data.length; i += FIELDS) one.run(data.slice(i, i + FIELDS));
});

/** synchronous = FULL in effect (batches a durable reply waits for); NORMAL otherwise. */
let fullSync = false;

parentPort!.on('message', (msg: ToWriter) => {
  if (msg.t === 'rows') {
    try {
      const sync = msg.sync === true;
      if (sync !== fullSync) {
        db.pragma(`synchronous = ${sync ? 'FULL' : 'NORMAL'}`);
        fullSync = sync;
      }
      if (msg.data.length > 0) writeBatch(msg.data);
      reply({ t: 'done', seq: msg.seq, written: msg.data.length / FIELDS });
    } catch (err) {
      reply({ t: 'done', seq: msg.seq, written: 0, error: err instanceof Error ? err.message : String(err) });
    }
    return;
  }
  // close: every earlier batch has been handled (messages arrive in order).
  try {
    db.close();
  } catch {
    // the rows are committed; a failing close loses nothing
  }
  setSignal(SIGNAL_CLOSED);
  port.close();
  parentPort!.close();
});
