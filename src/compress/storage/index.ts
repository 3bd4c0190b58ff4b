// Chooses the storage from configuration.
import type { Config } from "../../config/env.ts";
import { createGcsStorage } from "./gcs.ts";
import { createLocalStorage } from "./local.ts";
import type { ObjectStorage } from "./storage.ts";

export async function createStorage(config: Config["storage"]): Promise<ObjectStorage> {
  return config.kind === "gcs"
    ? createGcsStorage({ bucket: config.bucket, apiEndpoint: config.apiEndpoint, projectId: config.projectId })
    : createLocalStorage(config.dir, config.signingSecret);
}
