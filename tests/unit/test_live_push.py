"""Pushing live metrics: the Pushgateway protocol (PUT of the text exposition to
/metrics/job/<job>), received by a local HTTP endpoint standing in for a Pushgateway,
which is not installable on this project's machines."""
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from prometheus_client.parser import text_string_to_metric_families

from harness.runner.live import LiveMetrics


def test_push_sends_the_exposition_to_the_gateway_and_survives_an_outage():
    received: list[tuple[str, str, bytes]] = []

    class Gateway(BaseHTTPRequestHandler):
        def do_PUT(self):  # noqa: N802 - http.server's naming
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.command, self.path, body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Gateway)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        live = LiveMetrics()
        live.start_run("mariadb-10.11", "default", "sysbench oltp_read_only")
        live.update(1.0, "sysbench", "tps", 321.0, None)
        url = f"127.0.0.1:{srv.server_address[1]}"
        live.push_every(url, job="harness-quickstart", interval_s=0.1)
        for _ in range(50):
            if received:
                break
            threading.Event().wait(0.1)
        live.close()  # pushes a last time
    finally:
        srv.shutdown()
    assert len(received) >= 2
    method, path, body = received[-1]
    assert method == "PUT" and path == "/metrics/job/harness-quickstart"
    fams = {f.name: f for f in text_string_to_metric_families(body.decode())}
    assert fams["harness_sysbench_tps"].samples[0].value == 321.0
    # nobody listening: a push failure never raises into the run
    down = LiveMetrics()
    down.push("127.0.0.1:9", job="x")
