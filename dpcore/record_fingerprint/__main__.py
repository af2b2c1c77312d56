"""A record-fingerprint worker (``python -m dpcore.record_fingerprint VERSION ...``): the partial row sums of the
Arrow IPC stream on its stdin (:func:`dpcore.record_fingerprint.streams.serve_stream`)."""

from dpcore.record_fingerprint.streams import serve_stream

serve_stream()
