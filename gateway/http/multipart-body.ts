// The multipart form of a transcription (OpenAI's `POST /v1/audio/transcriptions`): its fields as
// strings, and its one audio file read as it arrives. The file is never held past the upload
// limit: the moment it passes it the request is refused with 413 and nothing more is read (the
// connection closes after the answer), and a Content-Length that says it will is refused before
// a byte is read. Only routes that ask for it (route config `multipart`) read such a body.
import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { AudioUpload } from '../endpoints/audio-file.ts';
import { type ApiError, errors } from '../api/api-error.ts';
import type { BodyDeadlines } from './body-deadlines.ts';
import { BodyBuffer } from './body-buffer.ts';
import { arrival } from './read-pace.ts';

/** What a form may hold besides its file: OpenAI's transcription form has 8 fields or so. */
const FORM_LIMITS = { fields: 32, fieldSize: 128 * 1024, parts: 33, files: 1, headerPairs: 64 } as const;
const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);
/** Bytes a form adds around its file (boundaries, part headers, fields): what a declared length may exceed the file limit by. */
const FORM_OVERHEAD = FORM_LIMITS.fields * FORM_LIMITS.fieldSize;

export function registerMultipartBody(app: FastifyInstance, maxFileBytes: number, deadlines: BodyDeadlines): void {
  app.addContentTypeParser('multipart/form-data', (request, payload, done) => {
    if (request.is404) return done(null, undefined);
    if (!request.routeOptions.config?.multipart) return done(errors.unsupportedMediaType(request.headers['content-type']), undefined);
    const declared = Number(request.headers['content-length']);
    if (declared > maxFileBytes + FORM_OVERHEAD) return done(errors.audioTooLarge(maxFileBytes), undefined);
    readForm(payload, request.headers, maxFileBytes, deadlines).then(
      (form) => done(null, form),
      (error: ApiError) => done(error, undefined),
    );
  });
}

/** The form's fields (a field sent more than once: its values in order) and its `file`, as it arrived (an AudioUpload). */
function readForm(
  payload: Readable,
  headers: Record<string, string | string[] | undefined>,
  maxFileBytes: number,
  deadlines: BodyDeadlines,
): Promise<object> {
  return new Promise((resolve, reject) => {
    let busboy: BusboyInstance;
    try {
      busboy = new Busboy({ headers: headers as BusboyHeaders, limits: { ...FORM_LIMITS, fileSize: maxFileBytes } });
    } catch (error) {
      return reject(errors.malformedForm((error as Error).message));
    }
    const fields = new Map<string, string | string[]>();
    let file: { bytes: BodyBuffer; filename: string; mimeType: string } | undefined;
    let failed = false;
    // The upload must arrive in time (body-deadlines.ts), and not all in one turn (read-pace.ts);
    // its bytes are counted as busboy reads them.
    const arriving = arrival(payload as IncomingMessage, deadlines, (why, ms) => fail(errors.bodyTimeout(why, ms)));
    const counted = (chunk: Buffer) => arriving.chunk(chunk);
    payload.on('data', counted);
    const fail = (error: ApiError) => {
      if (failed) return;
      failed = true;
      arriving.stop();
      payload.off('data', counted);
      payload.unpipe(busboy);
      // Fastify closes the connection after a body it could not read. An upload past the limit
      // is answered at once; any other refusal once the client has sent the rest (read to
      // nowhere, up to what the limit allows), so that it reads the answer, not a broken pipe.
      // A form found broken at its end (no closing boundary) has nothing more to wait for.
      if (error.code === 'request_too_large' || error.code === 'request_timeout' || payload.readableEnded) return reject(error);
      let rest = 0;
      const answer = () => {
        payload.off('data', count);
        reject(error);
      };
      const count = (chunk: Buffer) => {
        rest += chunk.length;
        if (rest > maxFileBytes + FORM_OVERHEAD) answer();
      };
      payload.on('data', count);
      payload.once('end', answer);
      payload.resume();
    };
    busboy.on('file', (name, stream, filename, _encoding, mimeType) => {
      if (name !== 'file') {
        stream.on('error', () => {});
        stream.resume();
        return fail(errors.invalidRequest(`The form's file must be its \`file\` field, not \`${name}\``, name));
      }
      // The file is most of the form: sized from the form's declared length.
      const bytes = new BodyBuffer(Number(headers['content-length']), maxFileBytes);
      file = { bytes, filename: filename || 'audio', mimeType };
      stream.on('data', (chunk: Buffer) => bytes.append(chunk));
      // A body that ends inside the file ("Part terminated early"): unheard, this error would end the process.
      stream.on('error', (error: Error) => fail(errors.malformedForm(error.message)));
      stream.on('limit', () => {
        bytes.clear();
        fail(errors.audioTooLarge(maxFileBytes));
      });
    });
    busboy.on('field', (name, value, _nameTruncated, valueTruncated) => {
      // As the JSON parser refuses them (json-body.ts): such a key could change the objects the gateway builds.
      if (RESERVED.has(name)) return fail(errors.invalidRequest(`A form field may not be named ${name}`, name));
      if (valueTruncated) return fail(errors.invalidRequest(`${name}: must be at most ${FORM_LIMITS.fieldSize} bytes`, name));
      const earlier = fields.get(name);
      fields.set(name, earlier === undefined ? value : [...(Array.isArray(earlier) ? earlier : [earlier]), value]);
    });
    busboy.on('filesLimit', () => fail(errors.invalidRequest('The form must hold one file, its `file` field', 'file')));
    busboy.on('fieldsLimit', () => fail(errors.malformedForm(`it has more than ${FORM_LIMITS.fields} fields`)));
    busboy.on('partsLimit', () => fail(errors.malformedForm(`it has more than ${FORM_LIMITS.parts} parts`)));
    busboy.on('error', (error: Error) => fail(errors.malformedForm(error.message)));
    // A client gone mid-upload: what was read is let go at once (nothing waits for an end that will not come).
    payload.once('close', () => {
      arriving.stop();
      if (!(payload as IncomingMessage).complete) reject(errors.malformedForm('the upload was cut off'));
    });
    payload.on('error', () => {});
    busboy.on('finish', () => {
      arriving.stop();
      payload.off('data', counted);
      if (failed) return;
      const form: Record<string, unknown> = Object.fromEntries(fields);
      // Its duration is read later, in the pipeline, once the caller may call the router and pay
      // for the least of it (pipeline/audio-reading.ts). The upload's buffer holds the file alone:
      // it may go to the scan's thread whole, not copied.
      if (file) form.file = new AudioUpload(file.bytes.take(), file.filename, file.mimeType, true);
      resolve(form);
    });
    payload.pipe(busboy);
  });
}
