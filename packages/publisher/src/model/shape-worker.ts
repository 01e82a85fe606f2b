/**
 * The worker thread of `ThreadedShapeValidator`: validates N-Triples against the shapes file it
 * was started with, one message at a time, off the publisher's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Parser } from 'n3';
import { ShapeValidator } from './shape-validator.js';

export interface ShapeRequest {
  readonly id: number;
  readonly ntriples: string;
}

const { shapesFile } = workerData as { shapesFile: string };
const validator = new ShapeValidator(shapesFile);
const port = parentPort;
if (port === null) throw new Error('shape-worker runs as a worker thread');

validator.load().then(
  () => port.postMessage({ ready: true }),
  (error: unknown) => port.postMessage({ ready: false, error: (error as Error).message }),
);

port.on('message', ({ id, ntriples }: ShapeRequest) => {
  validator
    .validate(new Parser({ format: 'application/n-triples', blankNodePrefix: '' }).parse(ntriples))
    .then(
      (report) => port.postMessage({ id, report }),
      (error: unknown) => port.postMessage({ id, error: (error as Error).message }),
    );
});
