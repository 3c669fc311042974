/**
 * Reading a file an operator names (the config file, key files): a regular
 * file of at most MAX_FILE_BYTES, checked before it is opened, so a FIFO,
 * `/dev/zero` or a directory is refused at once instead of hanging or
 * filling memory. Shared by the daemon (src/config and src/auth sit above this folder)
 * and project-cli.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';

/** The largest file read. */
export const MAX_FILE_BYTES = 1024 * 1024;

/** Why a named file cannot be used, in words for a one-line error (`<why>`, without the path). */
export class BoundedFileError extends Error {
  override name = 'BoundedFileError';
  constructor(
    message: string,
    /** The file is missing or not readable (as opposed to not a regular file, or too big). */
    readonly unreadable = false,
  ) {
    super(message);
  }
}

/**
 * The text of `file`, read whole only when it is a regular file of at most
 * MAX_FILE_BYTES (a file that grows while it is read stops at the limit + 1
 * byte, and is refused). Throws BoundedFileError.
 */
export function readBoundedFile(file: string): string {
  let fd: number | undefined;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new BoundedFileError('not a regular file');
    if (st.size > MAX_FILE_BYTES) throw new BoundedFileError(`larger than ${MAX_FILE_BYTES} bytes (1 MiB)`);
    fd = openSync(file, 'r');
    // Swapped for something else between the two calls: the open descriptor decides.
    if (!fstatSync(fd).isFile()) throw new BoundedFileError('not a regular file');
    const buf = Buffer.alloc(MAX_FILE_BYTES + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buf.length; length += n) n = readSync(fd, buf, length, buf.length - length, null);
    if (length > MAX_FILE_BYTES) throw new BoundedFileError(`larger than ${MAX_FILE_BYTES} bytes (1 MiB)`);
    return buf.toString('utf8', 0, length);
  } catch (err) {
    if (err instanceof BoundedFileError) throw err;
    throw new BoundedFileError(`cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, true);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
