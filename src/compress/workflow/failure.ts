// Why a compression ended without a result, as the code its record keeps (and a request answers).

import { HttpError } from "../../errors.ts";

/** Thrown when the client went away mid-upload: there is no one to answer. */
export class UploadAborted extends Error {
  constructor() {
    super("the client closed the connection during the upload");
    this.name = "UploadAborted";
  }
}

/** The failure code of an error: an HttpError's own, client_aborted, or internal_error for anything else. */
export function failureCode(error: unknown): string {
  if (error instanceof HttpError) return error.code;
  if (error instanceof UploadAborted) return "client_aborted";
  return "internal_error";
}
