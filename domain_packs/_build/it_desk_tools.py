"""Python tools of the it_desk world (copied verbatim to ``domain_packs/it_desk/tools.py`` by
``domain_packs/_build/build_worlds.py``; edit this file, not the copy).

``open_request`` writes a request and one pending approval per approver the group's sensitivity
needs, which a single SQL statement with a fixed row count cannot express.
"""

from __future__ import annotations

from typing import Any

from groundeval.worlds import WorldToolError

TODAY = "2026-04-08"


def _one(state: Any, sql: str, **params: Any) -> dict[str, Any] | None:
    return state.one(sql, params)


def open_request(state: Any, employee_id: str, group_id: str, requested_by: str, justification: str) -> dict[str, Any]:
    """Open an access request for ``employee_id`` to ``group_id``: pending, with a pending approval
    by the employee's manager, and by the group's owner unless the group is standard."""
    emp = _one(
        state, "SELECT status, manager_id FROM employees WHERE employee_id = $employee_id", employee_id=employee_id
    )
    if emp is None:
        raise WorldToolError("no such employee")
    if emp["status"] != "active":
        raise WorldToolError("access can only be requested for an active employee")
    who = _one(state, "SELECT status FROM employees WHERE employee_id = $requested_by", requested_by=requested_by)
    if who is None or who["status"] != "active":
        raise WorldToolError("the requester is not an active employee")
    grp = _one(state, "SELECT sensitivity, owner_id FROM groups WHERE group_id = $group_id", group_id=group_id)
    if grp is None:
        raise WorldToolError("no such group")
    pair = {"employee_id": employee_id, "group_id": group_id}
    if state.one("SELECT 1 AS x FROM grants WHERE employee_id = $employee_id AND group_id = $group_id", pair):
        raise WorldToolError("the employee already has this access")
    open_one = state.one(
        "SELECT request_id FROM access_requests WHERE employee_id = $employee_id AND group_id = $group_id "
        "AND status IN ('pending', 'approved') ORDER BY request_id LIMIT 1",
        pair,
    )
    if open_one:
        raise WorldToolError(f"an open request for this access already exists: {open_one['request_id']}")
    last = state.one("SELECT max(CAST(substr(request_id, 4) AS INTEGER)) AS n FROM access_requests", {})
    request_id = f"AR-{int(last['n']) + 1}"
    state.execute(
        "INSERT INTO access_requests (request_id, employee_id, group_id, requested_by, requested_on, justification, "
        "status) VALUES ($request_id, $employee_id, $group_id, $requested_by, $today, $justification, 'pending')",
        {
            **pair,
            "request_id": request_id,
            "requested_by": requested_by,
            "today": TODAY,
            "justification": justification,
        },
    )
    approvers = [("manager", emp["manager_id"])]
    if grp["sensitivity"] != "standard":
        approvers.append(("owner", grp["owner_id"]))
    for role, approver in approvers:
        state.execute(
            "INSERT INTO approvals (request_id, approver_role, approver_id, decision, decided_on) "
            "VALUES ($request_id, $role, $approver, 'pending', NULL)",
            {"request_id": request_id, "role": role, "approver": approver},
        )
    return {"request_id": request_id, "status": "pending", "approvals_needed": [r for r, _ in approvers]}
