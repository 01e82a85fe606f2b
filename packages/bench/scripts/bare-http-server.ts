/** A bare node:http server answering every request with the bytes and headers it is sent over IPC. */
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
process.once('message', (message: { body: string; headers: Record<string, string> }) => {
  const body = Buffer.from(message.body, 'base64');
  const headers = { ...message.headers, 'content-length': String(body.length) };
  createServer((_request, response) => {
    response.writeHead(200, headers);
    response.end(body);
  }).listen(port, '127.0.0.1', () => process.send?.('listening'));
});
