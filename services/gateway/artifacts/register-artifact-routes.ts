import type { FastifyInstance } from "fastify";
import { ARTIFACT_ROUTE, RPC_ROUTES } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { registerRpc, type Edge } from "../http/register-rpc.js";
import type { ArtifactRouteParams } from "./artifact-params.js";
import { DOWNLOAD_ROUTE, UPLOAD_ROUTE } from "./artifact-urls.js";
import { deleteArtifact } from "./delete-artifact.js";
import { downloadArtifact } from "./download-artifact.js";
import { getArtifact } from "./get-artifact.js";
import { listArtifacts } from "./list-artifacts.js";
import { presignDownload } from "./presign-download.js";
import { presignUpload } from "./presign-upload.js";
import { notAMediaType, uploadArtifact } from "./upload-artifact.js";

/**
 * The artifact operations: list, delete, the two presign RPCs, the download with a
 * credential, and the upload and download routes whose signed URL is their credential (no
 * `X-App-ID`, no JSON). Those two live in their own fastify context, where any body
 * reaches the upload as a stream: the JSON routes keep their parsers, limits and 415.
 */
export function registerArtifactRoutes(app: FastifyInstance, edge: Edge, gw: GatewayContext): void {
  registerRpc(app, edge, RPC_ROUTES.listArtifacts, listArtifacts(gw));
  registerRpc(app, edge, RPC_ROUTES.deleteArtifact, deleteArtifact(gw));
  registerRpc(app, edge, RPC_ROUTES.presignUpload, presignUpload(gw));
  registerRpc(app, edge, RPC_ROUTES.presignDownload, presignDownload(gw));
  app.route<{ Params: ArtifactRouteParams }>({
    method: "GET",
    url: ARTIFACT_ROUTE,
    exposeHeadRoute: false,
    config: { auth: "user" },
    handler: getArtifact(gw, edge),
  });

  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, payload, done) => done(null, payload));
    // Every media type is taken here, so a Content-Type fastify cannot read is a malformed header (400), not an unsupported type (415).
    // What this handler throws goes on to the app's error handler.
    scope.setErrorHandler(async (error) => {
      if ((error as { code?: unknown }).code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") throw notAMediaType();
      throw error;
    });

    const upload = `${UPLOAD_ROUTE}/:jobId/:artifactId`;
    const download = `${DOWNLOAD_ROUTE}/:jobId/:artifactId`;
    scope.put<{ Params: ArtifactRouteParams }>(upload, uploadArtifact(gw, edge.natsUp));
    scope.route<{ Params: ArtifactRouteParams }>({
      method: ["GET", "HEAD"],
      url: download,
      exposeHeadRoute: false,
      handler: downloadArtifact(gw, edge.natsUp),
    });
  });
}
