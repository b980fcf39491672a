"""The /stats chart draws every rating it has, a lone one included."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgba

from telesnap.bot.render.charts import stats_figure
from telesnap.bot.render.i18n import translator

ALL_CHATS = (1000.0, 1040.0, 1010.0, 1060.0, 1030.0)


def test_a_rating_line_of_one_game_is_drawn_as_a_dot() -> None:
    """Ann's first rated game here was her fifth in all chats: one point of this chat's line."""
    figure = stats_figure([(300, 2)], ALL_CHATS, (980.0,), translator("en"), chat_rating_games=(5,))
    figure.canvas.draw()
    rating_axes = figure.axes[1]
    _, chat_line = rating_axes.get_lines()
    assert chat_line.get_label() == "this chat"
    x, y = rating_axes.transData.transform((5, 980.0))
    pixels = np.asarray(figure.canvas.buffer_rgba())[:, :, :3]  # type: ignore[attr-defined]
    row, column = round(pixels.shape[0] - y), round(x)  # pixel rows count from the top
    around = pixels[row - 1 : row + 2, column - 1 : column + 2].reshape(-1, 3)
    colour = np.array(to_rgba(chat_line.get_color())[:3]) * 255
    assert np.abs(around - colour).max(axis=1).min() < 40, "nothing drawn at the point"
