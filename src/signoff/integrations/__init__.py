"""Adapters for agent frameworks. Each lives in its own module behind an extra
(`pip install signoff[langchain]`); importing `signoff` imports none of them."""
