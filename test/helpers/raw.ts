import net from 'node:net';
import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection. */
  closed: boolean;
}

/** Parses the first HTTP/1.1 response in `text`. */
export function parseResponse(text: string, closed: boolean): RawResponse {
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), closed };
}

/**
 * Writes raw bytes to the server and collects what comes back until the server closes the
 * connection or `waitMs` passes: for requests fetch cannot express (no Host, CONNECT, a
 * stalled body, a lying Content-Length).
 */
export function rawExchange(port: number, chunks: (string | Buffer)[], waitMs = 2000): Promise<RawResponse & { raw: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseResponse(received, closed), raw: received });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (data) => (received += data.toString('utf8')));
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('error', (error) => (received ? finish() : reject(error)));
    socket.on('connect', () => chunks.forEach((chunk) => socket.write(chunk)));
  });
}

export function portOf(baseUrl: string): number {
  return Number(new URL(baseUrl).port);
}

export interface NodeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body's bytes as sent: never decompressed. */
  bytes: Buffer;
  text: string;
  /** Parsed when JSON, else the text. */
  body: any;
}

/**
 * One request through node:http, which writes one header line per element of an array value
 * (fetch merges them) and never decodes a compressed body (fetch does).
 */
export function nodeRequest(port: number, method: string, path: string, headers: Record<string, string | string[]> = {}, body?: string | Buffer): Promise<NodeResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString('utf8');
        const json = (response.headers['content-type'] ?? '').includes('json') && text !== '' && response.headers['content-encoding'] === undefined;
        resolve({ status: response.statusCode!, headers: response.headers, bytes, text, body: json ? JSON.parse(text) : text });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}
