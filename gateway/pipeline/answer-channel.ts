// How the pipeline reaches the client, without knowing the transport: a whole answer is returned
// (its headers and text, for the HTTP layer to send), a stream is written to the connection the
// channel hands over. Node's ServerResponse is a ClientStream as it is, so the HTTP layer adds
// nothing between the pipeline and the socket.

/** The client's end of a streamed answer (the subset of ServerResponse the pipeline writes with). */
export interface ClientStream {
  /** Whether the client's connection is gone. */
  readonly destroyed: boolean;
  /** False when the connection's buffer is full: wait for 'drain' before writing more. */
  write(text: string): boolean;
  end(text?: string): void;
  /** Closes the connection, whatever is left unsent. */
  destroy(): void;
  /** 'finish': all of the answer, its end included, was handed to the connection. */
  once(event: 'drain' | 'finish', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

export interface AnswerChannel {
  /** Takes the connection over for a stream: its status (200) and `headers` sent, the rest written by the pipeline. */
  openStream(headers: Readonly<Record<string, string>>): ClientStream;
  /** `listener` runs once if the client goes away before its answer is whole. */
  onClientGone(listener: () => void): void;
}

/** A whole answer, for the transport to send with status 200. */
export interface WholeAnswer {
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}
