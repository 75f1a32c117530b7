"""The launch angle that throws a ball farthest against quadratic air drag.

`flight_range` integrates the ball's flight with midpoint (RK2) steps in a
Python `while` loop until it lands; `pullback.grad` differentiates through
that loop, whose number of iterations depends on the angle. Without drag the
best angle is 45 degrees; drag makes it flatter.

    python examples/projectile.py
    pullback --show examples/projectile.py:flight_range --wrt angle
"""

import math

import pullback

GRAVITY = 9.81


def acceleration(vx, vy, drag):
    """Gravity plus drag, opposite to the velocity and proportional to the speed squared."""
    speed = math.sqrt(vx * vx + vy * vy)
    return -drag * speed * vx, -GRAVITY - drag * speed * vy


def flight_range(angle, speed=40.0, drag=0.005, dt=0.01):
    """How far a ball launched at `angle` (radians) and `speed` (m/s) lands."""
    x, y = 0.0, 0.0
    vx, vy = speed * math.cos(angle), speed * math.sin(angle)
    x_before, y_before = x, y
    while y >= 0.0:
        x_before, y_before = x, y
        ax, ay = acceleration(vx, vy, drag)
        mid_vx, mid_vy = vx + 0.5 * dt * ax, vy + 0.5 * dt * ay
        mid_ax, mid_ay = acceleration(mid_vx, mid_vy, drag)
        x, y = x + dt * mid_vx, y + dt * mid_vy
        vx, vy = vx + dt * mid_ax, vy + dt * mid_ay
    return x_before + (x - x_before) * y_before / (y_before - y)  # where y crossed 0


def best_angle(angle=0.3, steps=20, learning_rate=2e-3):
    """Gradient ascent on the range; returns the angle in radians."""
    slope = pullback.grad(flight_range)
    for step in range(steps):
        d_angle = slope(angle)
        if step % 5 == 0:
            print(f"step {step:2d}  angle {math.degrees(angle):6.2f} deg  "
                  f"range {flight_range(angle):7.2f} m  d range/d angle {d_angle:8.3f} m/rad")
        angle = angle + learning_rate * d_angle
    return angle


if __name__ == "__main__":
    angle = best_angle()
    print(f"best angle {math.degrees(angle):.1f} degrees, range {flight_range(angle):.1f} m "
          f"(45 degrees: {flight_range(math.pi / 4):.1f} m)")
