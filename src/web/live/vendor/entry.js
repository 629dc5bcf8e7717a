// The parts of protobuf-es and connect-es the live board page uses (src/web/live/live.js),
// bundled into one ESM file: see README.md beside the bundle for versions and command.
export { fromBinary, createFileRegistry } from "@bufbuild/protobuf";
export { FileDescriptorSetSchema, timestampMs } from "@bufbuild/protobuf/wkt";
export { createClient, ConnectError, Code } from "@connectrpc/connect";
export { createGrpcWebTransport } from "@connectrpc/connect-web";
