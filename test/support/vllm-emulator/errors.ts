// The error answers of the emulator, in the JSON vLLM's OpenAI server writes for its own errors
// (ErrorResponse: object "error", message, type, param, code), so that a gateway in front of it
// reads the same bodies as in front of vLLM.
export class EmulatorError extends Error {
  readonly status: number;
  readonly type: string;

  constructor(status: number, type: string, message: string) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

export const badRequest = (message: string) => new EmulatorError(400, 'BadRequestError', message);

export function errorBody(error: EmulatorError): object {
  return { object: 'error', message: error.message, type: error.type, param: null, code: error.status };
}
