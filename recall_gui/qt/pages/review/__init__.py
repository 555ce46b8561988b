"""The Review page, in parts: ``page.ReviewPage`` builds the widgets and composes ``walking`` (the queue,
verdicts and Undo), which reads entries with ``loading``, hands them to ``showing`` (one entry on the page)
and makes queues with ``ordering``."""
