"""What the tests' HTTP receivers share (webhook_receiver.py, remote_write_receiver.py): the command line

    --port-file PATH --log PATH [--statuses 500,500,200] [--location URL]

a server on 127.0.0.1 at a free port (written to --port-file once it listens), each POST answered with the next
status of --statuses (200 once the list is used up), a 3xx with `Location: URL` when --location is given, and one
JSON line per request appended to --log, with `client_port`, the port of the connection it came on (so a test can
count connections).
"""

import argparse
import http.server
import json
import os
import threading


def serve(record, answer, protocol_version="HTTP/1.0"):
    """Runs until interrupted. `record(request, status, body)` gives the log line of a request (a dict; `request`
    is the BaseHTTPRequestHandler, for its path and headers); `answer(status)` gives the content type (or None) and
    the bytes of the response."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--statuses", default="")
    parser.add_argument("--location")
    arguments = parser.parse_args()
    statuses = [int(s) for s in arguments.statuses.split(",") if s]
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                status = statuses.pop(0) if statuses else 200
                entry = record(self, status, body)
                entry["client_port"] = self.client_address[1]
                with open(arguments.log, "a", encoding="utf-8") as log:
                    log.write(json.dumps(entry) + "\n")
            content_type, payload = answer(status)
            self.send_response(status)
            if arguments.location and 300 <= status < 400:
                self.send_header("Location", arguments.location)
            if content_type:
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format, *args):
            pass

    Handler.protocol_version = protocol_version
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    temporary = arguments.port_file + ".tmp"
    with open(temporary, "w") as port_file:
        port_file.write(str(server.server_address[1]))
    os.rename(temporary, arguments.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
