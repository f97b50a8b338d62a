"""The exercise topics: each module builds its exercises and registers them (name and title written
once, with register()); the bank is read off the registrations."""
