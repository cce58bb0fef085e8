import { deadlinePassed } from '../http/deadline';
import { redactUrl } from '../http/fetch';
import { httpsLink } from '../validation';
import { errorMessage } from '../errors';
import { ERROR_CODES } from './constants';
import { InterviewServiceError, UnavailableError } from './errors';

/** The interview report as a file the connector attaches to the candidate's record. */
export interface ReportFile {
  name: string;
  contentType: 'application/pdf';
  bytes: Uint8Array;
}

/**
 * The service has no file the connector can attach at the report's link: none there (404), a refusal, a file that is
 * not a PDF or one over the size the ATS takes. A verdict: the report's note keeps its link and says why.
 */
export class ReportFileUnavailableError extends InterviewServiceError {
  public readonly reason: string;

  public constructor(reason: string, status?: number) {
    super(ERROR_CODES.invalidRequest, false, `report file: ${reason}`, { status });
    this.name = 'ReportFileUnavailableError';
    this.reason = reason;
  }
}

export interface ReadReportFileOptions {
  /** The most bytes read: a larger file is refused before its body is read, or as soon as it passes the limit. */
  maxBytes: number;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  fetch?: typeof fetch | undefined;
}

const PDF_MAGIC = '%PDF-';
const PDF_TYPES = ['application/pdf', 'application/octet-stream', 'binary/octet-stream'];

/**
 * Reads the report file at `url` (the report's `report_url`: "URL of the report file"), bounded: its size capped,
 * its type and its first bytes those of a PDF, within the timeout and the worker's deadline. No credential goes with
 * it: the link is the service's file host, whose links need none. An answer that did not come, or a 5xx, 408 or 429,
 * leaves the work retryable; any other refusal, or a file that is no PDF or too large, is a ReportFileUnavailableError.
 */
export async function readReportFile(url: string, options: ReadReportFileOptions): Promise<Uint8Array> {
  const where = `GET ${redactUrl(url)}`;
  if (deadlinePassed(options.signal)) throw new UnavailableError(`${where} not sent: deadline passed`);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const response = await fetchFollowingHttps(url, signal, options.fetch ?? fetch, where);
  try {
    return await readBody(response, options.maxBytes, where);
  } catch (error) {
    // A body cut off on its way (a lost connection, the deadline) is no verdict.
    if (error instanceof InterviewServiceError) throw error;
    throw new UnavailableError(`${where}: the file was cut off: ${errorMessage(error)}`, { cause: error });
  } finally {
    // Whatever was not read is let go: nothing of the file is kept beyond this call.
    await response.body?.cancel().catch(() => undefined);
  }
}

/** Redirects a file host may send on its way to the file (a signed storage URL): a few, every one to https. */
const MAX_REDIRECTS = 3;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * The file's answer, its redirects followed by hand: each must go to an https URL (never down to http, nor to a
 * scheme or host the link itself could not name), at most MAX_REDIRECTS of them. fetch's own following would take
 * any target, 20 deep.
 */
async function fetchFollowingHttps(url: string, signal: AbortSignal, fetchImpl: typeof fetch, where: string) {
  let target = url;
  for (let hop = 0; ; hop++) {
    let response: Response;
    try {
      response = await fetchImpl(target, {
        method: 'GET',
        headers: { accept: 'application/pdf' },
        redirect: 'manual',
        signal,
      });
    } catch (error) {
      throw new UnavailableError(`${where} failed: ${errorMessage(error)}`, { cause: error });
    }
    if (!REDIRECTS.has(response.status)) return response;
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get('location');
    const next = location ? httpsLink(safeUrl(location, target)) : undefined;
    if (!next) throw new ReportFileUnavailableError('its link redirects to a place that is not https');
    if (hop + 1 > MAX_REDIRECTS)
      throw new ReportFileUnavailableError(`its link redirects more than ${MAX_REDIRECTS} times`);
    target = next;
  }
}

/** `location` resolved against the URL that sent it, or undefined when it is no URL. */
function safeUrl(location: string, base: string): string | undefined {
  try {
    return new URL(location, base).href;
  } catch {
    return undefined;
  }
}

async function readBody(response: Response, maxBytes: number, where: string): Promise<Uint8Array> {
  const { status } = response;
  if (status >= 500 || status === 408 || status === 429)
    throw new UnavailableError(`${where}: the file host answered ${status}`, { status });
  if (status === 404 || status === 410)
    throw new ReportFileUnavailableError('the service has no file at its link', status);
  if (status < 200 || status >= 300)
    throw new ReportFileUnavailableError(`the file host refused it (${status})`, status);
  const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!PDF_TYPES.includes(type)) throw new ReportFileUnavailableError(`it is not a PDF (${type || 'no type'})`);
  const tooLarge = () =>
    new ReportFileUnavailableError(`it is over the ${megabytes(maxBytes)} a report file may be on this ATS`);
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader?.read()) {
    size += chunk.value.byteLength;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk.value);
  }
  const bytes = Buffer.concat(chunks);
  if (bytes.subarray(0, PDF_MAGIC.length).toString('latin1') !== PDF_MAGIC)
    throw new ReportFileUnavailableError('it is not a PDF (its first bytes are not %PDF-)');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const megabytes = (bytes: number) => `${Math.round((bytes / 1_048_576) * 10) / 10} MB`;
