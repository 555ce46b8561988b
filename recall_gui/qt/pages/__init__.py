"""The window's pages (tabs): each gets the window's shared services, never the window itself."""
