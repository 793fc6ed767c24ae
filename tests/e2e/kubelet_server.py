#!/usr/bin/python3
"""A stand-in for the kubelet's pod-resources API (tests/e2e/test_kubelet.sh).

    kubelet_server.py SOCKET MODE [PODS.json]

Serves v1.PodResourcesLister/List with grpcio on the unix socket SOCKET,
with the messages of k8s.io/kubelet/pkg/apis/podresources/v1/api.proto
built at run time from their field numbers (python3-protobuf), including
fields the exporter does not read (CPU ids, memory, topology), which it
must skip. MODE:

    ok        the pods of PODS.json: [{"name", "namespace", "containers":
              [{"name", "devices": [{"resource", "ids": [...]}]}]}]
    stall     List never answers (the handler sleeps)
    error     List fails with gRPC status UNAVAILABLE
    badproto  List answers bytes that are no ListPodResourcesResponse
    silent    not gRPC: connections are taken and never answered
    garbage   not gRPC: each connection gets random bytes

Writes "ready" on stdout once it listens. Runs until killed; it also
ends by itself after 300 s, so a test that dies leaves nothing behind.
"""
import json
import os
import socket
import sys
import threading
import time
from concurrent import futures

LIFETIME_S = 300


def messages():
    from google.protobuf import descriptor_pb2, descriptor_pool
    from google.protobuf import message_factory

    F = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(name="podres_test.proto", package="v1",
                                            syntax="proto3")

    def msg(name, fields):
        m = fd.message_type.add(name=name)
        for fname, num, ftype, label, tname in fields:
            f = m.field.add(name=fname, number=num, type=ftype, label=label)
            if tname:
                f.type_name = ".v1." + tname

    one, many = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    msg("ListPodResourcesRequest", [])
    msg("NUMANode", [("ID", 1, F.TYPE_INT64, one, None)])
    msg("TopologyInfo", [("nodes", 1, F.TYPE_MESSAGE, many, "NUMANode")])
    msg("ContainerMemory", [("memory_type", 1, F.TYPE_STRING, one, None),
                            ("size", 2, F.TYPE_UINT64, one, None),
                            ("topology", 3, F.TYPE_MESSAGE, one, "TopologyInfo")])
    msg("ContainerDevices", [("resource_name", 1, F.TYPE_STRING, one, None),
                             ("device_ids", 2, F.TYPE_STRING, many, None),
                             ("topology", 3, F.TYPE_MESSAGE, one, "TopologyInfo")])
    msg("ContainerResources", [("name", 1, F.TYPE_STRING, one, None),
                               ("devices", 2, F.TYPE_MESSAGE, many, "ContainerDevices"),
                               ("cpu_ids", 3, F.TYPE_INT64, many, None),
                               ("memory", 4, F.TYPE_MESSAGE, many, "ContainerMemory")])
    msg("PodResources", [("name", 1, F.TYPE_STRING, one, None),
                         ("namespace", 2, F.TYPE_STRING, one, None),
                         ("containers", 3, F.TYPE_MESSAGE, many, "ContainerResources")])
    msg("ListPodResourcesResponse", [("pod_resources", 1, F.TYPE_MESSAGE, many, "PodResources")])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    factory = message_factory.MessageFactory(pool)
    get = (lambda n: factory.GetPrototype(pool.FindMessageTypeByName("v1." + n)))
    return get("ListPodResourcesRequest"), get("ListPodResourcesResponse")


def response(Resp, pods):
    r = Resp()
    for p in pods:
        pr = r.pod_resources.add(name=p["name"], namespace=p["namespace"])
        for c in p["containers"]:
            cr = pr.containers.add(name=c["name"])
            cr.cpu_ids.extend([2, 3])
            mem = cr.memory.add(memory_type="memory", size=1 << 30)
            mem.topology.nodes.add(ID=0)
            for d in c["devices"]:
                dv = cr.devices.add(resource_name=d["resource"])
                dv.device_ids.extend(d["ids"])
                dv.topology.nodes.add(ID=1)
    return r


def serve_grpc(path, mode, pods_file):
    import grpc

    Req, Resp = messages()
    pods = json.load(open(pods_file)) if pods_file else []

    def list_(request, context):
        if mode == "stall":
            time.sleep(LIFETIME_S)
        if mode == "error":
            context.abort(grpc.StatusCode.UNAVAILABLE, "kubelet restarting")
        if mode == "badproto":
            return b"\xff\xff\xff\xff garbage"
        return response(Resp, pods).SerializeToString()

    handler = grpc.method_handlers_generic_handler("v1.PodResourcesLister", {
        "List": grpc.unary_unary_rpc_method_handler(
            list_, request_deserializer=Req.FromString,
            response_serializer=lambda b: b),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port("unix:" + path)
    server.start()
    return server


def serve_raw(path, mode):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    held = []

    def loop():
        while True:
            c, _ = s.accept()
            held.append(c)  # never closed: a peer that says nothing more
            if mode == "garbage":
                try:
                    c.sendall(os.urandom(4096))
                except OSError:
                    pass

    threading.Thread(target=loop, daemon=True).start()
    return s


def main():
    path, mode = sys.argv[1], sys.argv[2]
    pods_file = sys.argv[3] if len(sys.argv) > 3 else None
    if os.path.exists(path):
        os.unlink(path)
    keep = serve_raw(path, mode) if mode in ("silent", "garbage") else \
        serve_grpc(path, mode, pods_file)
    print("ready", flush=True)
    time.sleep(LIFETIME_S)
    del keep


if __name__ == "__main__":
    main()
