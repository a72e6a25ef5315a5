"""Sending what the store's outbox holds: the delivery worker `signoff serve` runs, its retry
policy, and outbound webhooks (DESIGN §9)."""

from __future__ import annotations

from .retry import RetryPolicy
from .settings import OutboxSettings
from .worker import DeliveryWorker

__all__ = ["DeliveryWorker", "OutboxSettings", "RetryPolicy"]
