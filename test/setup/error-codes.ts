// Every test file, every surface: an HttpError with a code (or a status) the registry in
// src/errors.ts does not hold fails the file that made it, whatever the test asserted.
import { afterAll, expect } from "vitest";
import { takeUnregisteredErrors } from "../../src/errors.ts";

afterAll(() => {
  expect(takeUnregisteredErrors(), "error codes missing from src/errors.ts").toEqual([]);
});
