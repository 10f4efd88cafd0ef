"""Python tools of the test world."""

from groundeval.worlds import WorldToolError


def open_ticket(state, order_id, note):
    if state.one("SELECT order_id FROM orders WHERE order_id = $order_id", {"order_id": order_id}) is None:
        raise WorldToolError("no such order")
    n = state.one("SELECT count(*) AS n FROM tickets")["n"]
    ticket_id = f"T-{n + 1:03d}"
    state.execute(
        "INSERT INTO tickets (ticket_id, order_id, note) VALUES ($ticket_id, $order_id, $note)",
        {"ticket_id": ticket_id, "order_id": order_id, "note": note},
    )
    return {"ticket_id": ticket_id}
