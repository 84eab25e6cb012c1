"""``abstat audit``: check ministat reports and bare averages found in text.

Public API: :func:`audit_text` and :func:`audit_file` return an
:class:`AuditReport` (``to_dict()`` is the JSON contract); nothing here
prints.
"""

from __future__ import annotations

from abstat.audit.report import AuditReport, BlockAudit, ComparisonAudit, audit_text
from abstat.audit.source import audit_file

__all__ = ["AuditReport", "BlockAudit", "ComparisonAudit", "audit_file", "audit_text"]
