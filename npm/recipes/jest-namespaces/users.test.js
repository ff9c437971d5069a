const { api } = require('./namespace')

test.each(['Ana', 'Beto', 'Carla'])('%s signs up with the email every worker uses', async (name) => {
  const user = { name, email: 'same@rock-legends.com', password: 'i-love-rock' }
  expect(await api.user.signup(user)).toMatchObject({ id: 1, name })
  const { token } = await api.user.login({ email: user.email, password: user.password })
  expect(await api.with({ token }).user.me()).toMatchObject({ id: 1, name })
})
